// Makes `import ... from 'sdk'` and `require('sdk')` find this runtime's sdk
// without the function installing anything (the npm name `sdk` belongs to an
// unrelated package). `cloudevents` and `@opentelemetry/api`, which a function
// uses with the sdk, resolve to the runtime's own copies when the function has
// none (as in Kyma's image, where the function sits below the runtime's
// node_modules). The runtime imports this first; a function's own unit tests use
// it the same way: `node --import <repo>/nodejs26/sdk/register.js --test`.
import { registerHooks } from 'node:module';

const SDK = new URL('./index.js', import.meta.url).href;
const RUNTIME = new URL('../package.json', import.meta.url).href;
const SHARED = new Set(['cloudevents', '@opentelemetry/api']);

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier === 'sdk') return { url: SDK, format: 'module', shortCircuit: true };
    if (!SHARED.has(specifier)) return nextResolve(specifier, context);
    try {
      return nextResolve(specifier, context);
    } catch (error) {
      if (error?.code !== 'ERR_MODULE_NOT_FOUND' && error?.code !== 'MODULE_NOT_FOUND') throw error;
      return nextResolve(specifier, { ...context, parentURL: RUNTIME });
    }
  },
});
