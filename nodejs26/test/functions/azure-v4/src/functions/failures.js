// What the host answers when a function throws, or returns what is no HTTP response.
const { app, HttpResponse } = require('@azure/functions');

app.http('fails', {
    methods: ['GET'],
    authLevel: 'anonymous',
    handler: async () => {
        throw new Error('database password is hunter2');
    }
});

app.http('returnsText', {
    methods: ['GET'],
    authLevel: 'anonymous',
    handler: () => 'not an HttpResponseInit'
});

app.http('returnsNothing', {
    methods: ['GET'],
    authLevel: 'anonymous',
    handler: () => undefined
});

app.http('responseObject', {
    methods: ['GET'],
    authLevel: 'anonymous',
    handler: (request) => new HttpResponse({ status: 202, body: Buffer.from(request.headers.get('x-echo') ?? ''), headers: { 'Content-Type': 'application/octet-stream' } })
});

app.timer('nightly', {
    schedule: '0 0 3 * * *',
    handler: (timer, context) => context.log('not served over HTTP')
});
