const functions = require('@google-cloud/functions-framework');

functions.http('heads', (req, res) => {
  if (req.path === '/ctl') return res.set('X-A', 'a\x01b').send('x');
  if (req.path === '/interim') return res.status(100).send('x');
  if (req.path === '/te') return res.set('Transfer-Encoding', 'chunked').send('abc');
  return res.send('ok');
});
