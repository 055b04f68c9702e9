// Streams as the Azure docs' HTTP streams example does: a ReadableStream body, and the request body read as a stream.
import { app } from '@azure/functions';

app.http('countdown', {
    methods: ['GET'],
    authLevel: 'anonymous',
    route: 'countdown/{from:int}',
    handler: async (request) => {
        const from = Number(request.params.from);
        let next = from;
        const body = new ReadableStream({
            async pull(controller) {
                if (next < 0) return controller.close();
                controller.enqueue(new TextEncoder().encode(`${next}\n`));
                next -= 1;
            }
        });
        return { body, headers: { 'Content-Type': 'text/plain' } };
    }
});

app.post('upload', {
    authLevel: 'anonymous',
    handler: async (request, context) => {
        let bytes = 0;
        for await (const chunk of request.body) bytes += chunk.length;
        return { jsonBody: { bytes, hook: context.invocationContext === undefined ? 'none' : 'set', name: request.headers.get('x-name') } };
    }
});

app.get('recovers', {
    authLevel: 'anonymous',
    handler: () => {
        throw new Error('recover me');
    }
});

app.get('nothing', {
    authLevel: 'anonymous',
    handler: () => undefined
});
