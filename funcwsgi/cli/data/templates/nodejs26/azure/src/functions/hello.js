// An Azure Functions app (Node.js v4 programming model): GET or POST /api/hello.
//
// Nothing here imports funcwsgi: the same folder deploys to Azure with
// `func azure functionapp publish`, and nodejs26 serves it as the Functions host
// does (routes under host.json's routePrefix; every file package.json "main"
// matches is loaded). nodejs26 provides '@azure/functions' when it is not
// installed; installed, the library itself runs.
const { app } = require('@azure/functions');

async function hello(request, context) {
    context.log(`Http function processed request for url "${request.url}"`);
    const body = request.method === 'POST' ? await request.json().catch(() => ({})) : {};
    const name = request.query.get('name') || body.name || 'world';
    return { jsonBody: { message: `Hello, ${name}!` } };
}

app.http('hello', {
    methods: ['GET', 'POST'],
    authLevel: 'anonymous',
    handler: hello,
});

module.exports = { hello };
