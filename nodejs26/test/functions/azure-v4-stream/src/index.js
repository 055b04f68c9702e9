import { app } from '@azure/functions';

app.setup({
    enableHttpStream: true,
});

app.hook.appStart((context) => {
    context.hookData.startedAt = new Date().toISOString();
});

app.hook.preInvocation((context) => {
    context.hookData.seen = context.invocationContext.functionName;
});

app.hook.postInvocation((context) => {
    if (context.error?.message === 'recover me') {
        context.error = null;
        context.result = { status: 203, body: `recovered after ${context.hookData.seen}` };
    }
});
