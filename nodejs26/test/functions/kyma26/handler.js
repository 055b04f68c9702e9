// A function written for Kyma's nodejs26 runtime (Express 5 objects, CommonJS,
// require('sdk')), unchanged: each path is one row of docs/migration-kyma-nodejs.md.
const { getCloudEvent, emitCloudEvent, getTracer, getFunctionName, getNamespace, getRuntime, getTimeout, getBodySizeLimit } = require('sdk');

function thrown(action) {
  try { return action(); } catch (error) { return `${error.name}: ${error.message}`; }
}

module.exports = {
  main: function (req, res) {
    switch (req.path) {
      case '/send': return res.send('Hello ' + req.body.name);
      case '/status-send': return res.status(400).send('Missing id parameter');
      case '/json': return res.json({ id: req.query.id, all: req.query.tag });
      case '/set': res.set('X-One', '1'); res.set({ 'X-Two': '2' }); res.setHeader('X-Three', '3'); res.header('X-Four', '4'); return res.send('set');
      case '/type': res.type('json'); return res.send('{"typed":true}');
      case '/end': res.status(202); return res.end();
      case '/sendStatus': return res.sendStatus(418);
      case '/get': return res.json({ viaGet: req.get('X-Custom'), viaHeaders: req.headers['x-custom'], host: req.hostname, is: req.is('json') });
      case '/params': return res.json(req.params);
      case '/route': return res.json({ params: req.params, path: req.path, query: req.query, get: [req.get('X-Custom'), req.get('Referrer'), req.get('X-Absent')], noName: thrown(() => req.get()) });
      case '/text-body': return res.send(typeof req.body + ':' + req.body);
      case '/metadata': return res.json({ name: getFunctionName(), namespace: getNamespace(), runtime: getRuntime(), timeout: getTimeout(), limit: getBodySizeLimit(), tracer: typeof getTracer().startActiveSpan });
      case '/cloudevent': { const ce = getCloudEvent(req); return res.send(ce ? ce.type + '/' + ce.source + '/' + JSON.stringify(ce.data) : 'not a cloud event'); }
      case '/async': return (async () => { await new Promise((r) => setTimeout(r, 5)); res.json({ later: true }); })();
      case '/reject': return Promise.reject(new Error('kyma26-secret'));
      case '/throw': throw new Error('kyma26-secret-sync');
      case '/emit': return emitCloudEvent('kyma.order', '/orders', { orderId: '123' }).then(() => res.send('event emitted'), (e) => res.status(502).send(e.name));
      default: return res.status(req.params.path[1] === 'route' ? 200 : 404).json({ method: req.method, params: req.params, path: req.path });
    }
  },
};
