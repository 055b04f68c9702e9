// A function written for Kyma's nodejs20-24 runtimes, main(event, context), unchanged:
// each path is one row of docs/migration-kyma-nodejs.md.
module.exports = {
  main: async function (event, context) {
    const req = event.extensions.request;
    const res = event.extensions.response;
    switch (req.path) {
      case '/data': return 'Hello, ' + event.data.name;
      case '/object': return { got: event.data };
      case '/context': return { ...context, tracer: typeof event.tracer.startSpan };
      case '/ce': return { type: event['ce-type'], source: event['ce-source'], id: event['ce-id'], specversion: event['ce-specversion'], eventtypeversion: event['ce-eventtypeversion'], data: event.data };
      case '/helpers': event.setResponseStatus(201); event.setResponseHeader('X-Helper', 'yes'); event.setResponseContentType('text/csv'); return 'a,b';
      case '/response': res.status(203).send('by hand'); return undefined;
      case '/emit': await event.emitCloudEvent('legacy.order', '/legacy', { n: 1 }, { subject: 'legacy' }); return 'emitted';
      case '/build': return event.buildResponseCloudEvent('id-1', 'legacy.reply', { ok: true });
      case '/throw': throw new Error('legacy-secret');
      case '/nothing': return undefined;
      case '/buffer': return event.data;
      default: return 'no';
    }
  },
};
