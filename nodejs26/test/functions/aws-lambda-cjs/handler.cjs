// A CommonJS module named .cjs, with a nested export as `_HANDLER=handler.api.get` names it.
module.exports.api = {
  get: async (event) => ({ statusCode: 200, headers: { 'content-type': 'text/plain' }, body: `cjs ${event.requestContext.http.method}` }),
};
