// Prints every setting as JSON, one array: `node nodejs26/lib/settings-list.js`.
// Read by tests/nodejs26/test_settings_parity.py and by the docs.
import { settingsList } from './config.js';

process.stdout.write(`${JSON.stringify(settingsList(), null, 1)}\n`);
