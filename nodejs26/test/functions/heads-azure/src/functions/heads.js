const { app } = require('@azure/functions');

app.http('heads', {
    methods: ['GET'],
    authLevel: 'anonymous',
    route: 'heads/{kind}',
    handler: async (request) => {
        switch (request.params.kind) {
            case 'ctl': return { body: 'x', headers: { 'X-A': 'a\x01b' } };
            case 'status': return { status: 1000, body: 'x' };
            case 'interim': return { status: 100, body: 'x' };
            case 'no-content': return { status: 204, body: 'x' };
            case 'te': return { body: 'abc', headers: { 'Transfer-Encoding': 'gzip' } };
            default: return { body: 'ok' };
        }
    }
});
