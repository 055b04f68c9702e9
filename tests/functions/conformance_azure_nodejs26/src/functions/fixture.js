// The conformance fixture's core paths as Azure Functions (v4 programming model).
const { app } = require('@azure/functions');
const { setTimeout: sleep } = require('node:timers/promises');

const SECRET = 'conformance-secret-7f3a';
const ALL = ['GET', 'POST', 'PATCH'];

app.http('hello', { methods: ALL, handler: () => ({ body: 'hello' }) });

app.http('json', { methods: ALL, handler: () => ({ jsonBody: { a: 1, list: [1, 'two'], text: 'ü' } }) });

app.http('status', {
    methods: ALL,
    route: 'status/{code:int}',
    handler: (request) => ({ status: Number(request.params.code), body: `status ${request.params.code}` }),
});

app.http('headers', { methods: ALL, handler: () => ({ body: '', headers: { 'X-Conformance': 'yes' } }) });

app.http('echo', {
    methods: ['POST'],
    handler: async (request) => ({
        body: Buffer.from(await request.arrayBuffer()),
        headers: { 'Content-Type': request.headers.get('content-type') ?? 'application/octet-stream' },
    }),
});

app.http('request', {
    methods: ALL,
    handler: (request) => {
        const query = {};
        for (const [name, value] of new URL(request.url).searchParams) (query[name] ??= []).push(value);
        return { jsonBody: { method: request.method, path: '/request', query } };
    },
});

app.http('raise', {
    methods: ALL,
    handler: () => {
        throw new Error(SECRET);
    },
});

app.http('sleep', {
    methods: ALL,
    handler: async (request) => {
        await sleep(Number(request.query.get('seconds') ?? '1') * 1000);
        return { body: 'slept' };
    },
});

app.http('size', { methods: ['POST'], handler: async (request) => ({ body: String((await request.arrayBuffer()).byteLength) }) });
