// Makes `import ... from 'sdk'` and `require('sdk')` find this runtime's sdk
// without the function installing anything (the npm name `sdk` belongs to an
// unrelated package). The runtime imports this first; a function's own unit
// tests use it the same way: `node --import <repo>/nodejs26/sdk/register.js --test`.
import { registerHooks } from 'node:module';

const SDK = new URL('./index.js', import.meta.url).href;

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier === 'sdk') return { url: SDK, format: 'module', shortCircuit: true };
    return nextResolve(specifier, context);
  },
});
