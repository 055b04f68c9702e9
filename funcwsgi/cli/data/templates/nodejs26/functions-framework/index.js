// A Cloud Run function (Google's Functions Framework for Node.js): helloHttp
// answers every path and method.
//
// Nothing here imports funcwsgi: the same folder deploys with
// `gcloud functions deploy --gen2 --runtime nodejs22 --entry-point helloHttp`.
// nodejs26 finds the function as the framework does (package.json "main",
// FUNCTION_TARGET, else the --target of the start script below) and provides
// '@google-cloud/functions-framework' when it is not installed.
const functions = require('@google-cloud/functions-framework');

functions.http('helloHttp', (req, res) => {
  const name = req.query.name || req.body?.name || 'world';
  res.json({ message: `Hello, ${name}!` });
});
