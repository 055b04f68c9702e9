// HTTP and CloudEvent functions as Google's Node.js samples write them (helloHttp,
// helloGET, helloPubSub), registered with the Functions Framework.
const functions = require('@google-cloud/functions-framework');

const escape = (text) => String(text).replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

functions.http('helloHttp', (req, res) => {
  res.send(`Hello ${escape(req.query.name || (req.body && req.body.name) || 'World')}!`);
});

functions.http('helloGET', (req, res) => {
  res.send('Hello World!');
});

functions.http('hello-json', (req, res) => {
  res.status(201).json({ method: req.method, path: req.path, query: req.query, body: req.body ?? null });
});

functions.http('fails', (req, res) => {
  throw new Error('database password is hunter2');
});

functions.http('rejects', async (req, res) => {
  await Promise.resolve();
  throw new Error('database password is hunter2');
});

functions.cloudEvent('helloPubSub', (cloudEvent) => {
  const base64name = cloudEvent.data.message.data;
  const name = base64name ? Buffer.from(base64name, 'base64').toString() : 'World';
  console.log(`Hello, ${name}!`);
});

functions.cloudEvent('eventFails', () => {
  throw new Error('database password is hunter2');
});

functions.cloudEvent('echoEvent', (cloudEvent) => ({ id: cloudEvent.id, type: cloudEvent.type, data: cloudEvent.data }));

// A function exported the first-generation way, without registering it.
exports.helloWorld = (req, res) => {
  res.send('Hello, World');
};

exports.nested = { greeter: (req, res) => res.send('nested export') };

// A CloudEvent function exported, not registered: FUNCTION_SIGNATURE_TYPE=cloudevent says how to call it.
exports.logEvent = (cloudEvent) => {
  console.log(`event ${cloudEvent.id} of type ${cloudEvent.type}`);
};
