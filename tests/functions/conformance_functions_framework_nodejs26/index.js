// The conformance fixture's core paths as one Functions Framework HTTP function
// (every path reaches it, as the framework routes).
const functions = require('@google-cloud/functions-framework');

const SECRET = 'conformance-secret-7f3a';

functions.http('fixture', async (req, res) => {
  const [, first, second] = req.path.split('/');
  switch (first) {
    case 'hello':
      return res.send('hello');
    case 'json':
      return res.json({ a: 1, list: [1, 'two'], text: 'ü' });
    case 'status':
      return res.status(Number(second)).send(`status ${second}`);
    case 'headers':
      return res.set('X-Conformance', 'yes').send('');
    case 'echo':
      return res.type(req.get('content-type') ?? 'application/octet-stream').send(req.rawBody);
    case 'request': {
      const query = {};
      for (const [name, value] of Object.entries(req.query)) query[name] = [value].flat();
      return res.json({ method: req.method, path: req.path, query });
    }
    case 'raise':
      throw new Error(SECRET);
    case 'sleep':
      await new Promise((resolve) => setTimeout(resolve, Number(req.query.seconds ?? '1') * 1000));
      return res.send('slept');
    case 'size':
      return res.send(String(req.rawBody.length));
    default:
      return res.status(404).send('no such path');
  }
});
