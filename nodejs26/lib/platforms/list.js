// Prints the platform registry as JSON, one array: `node nodejs26/lib/platforms/list.js`
// (tests/nodejs26/test_platforms_parity.py compares it with funcwsgi.compat.PLATFORMS).
import { registryList } from './index.js';

process.stdout.write(`${JSON.stringify(await registryList(), null, 1)}\n`);
