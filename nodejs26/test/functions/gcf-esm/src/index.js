// The ES module form of Google's helloHttp sample.
import * as ff from '@google-cloud/functions-framework';

ff.http('helloESM', (req, res) => {
  res.set('X-Sample', 'esm').send(`Hello ${req.query.name ?? 'World'}!`);
});
