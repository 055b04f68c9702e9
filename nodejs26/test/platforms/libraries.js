// A platform's sample function as it deploys: its folder copied outside the runtime's tree
// (where nothing but its own node_modules can supply its imports), with or without the
// dependencies its package-lock.json pins. Those are installed once per fixture and lock into
// .tools/platform-libraries/<fixture>/ (`make setup` does it first; a test that finds them
// missing installs them with the project's npm) and linked in as the copy's node_modules.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { functions, ROOT } from '../helpers.js';

const REPO = path.resolve(ROOT, '..');
const NODE_BIN = path.join(REPO, '.tools', 'node', 'node_modules', '.bin');
export const LIBRARIES = path.join(REPO, '.tools', 'platform-libraries');

/** The node_modules holding what `fixture`'s package-lock.json pins, installed when missing or stale. */
export function installed(fixture) {
  const source = functions(fixture);
  const target = path.join(LIBRARIES, fixture);
  const lock = fs.readFileSync(path.join(source, 'package-lock.json'), 'utf8');
  const stamp = path.join(target, 'node_modules', '.installed-lock');
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === lock) return path.join(target, 'node_modules');
  fs.mkdirSync(target, { recursive: true });
  for (const file of ['package.json', 'package-lock.json']) fs.copyFileSync(path.join(source, file), path.join(target, file));
  execFileSync(path.join(NODE_BIN, 'npm'), ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: target, env: { ...process.env, PATH: `${NODE_BIN}:${process.env.PATH}` }, stdio: ['ignore', 'ignore', 'inherit'] });
  fs.writeFileSync(stamp, lock);
  return path.join(target, 'node_modules');
}

/** A copy of `fixture` in a fresh folder under the system's temporary folder; `withLibrary`: its locked dependencies linked in. */
export function deployed(fixture, { withLibrary }) {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), `nodejs26-${fixture}-`));
  fs.cpSync(functions(fixture), folder, { recursive: true });
  if (withLibrary) fs.symlinkSync(installed(fixture), path.join(folder, 'node_modules'), 'dir');
  return folder;
}

export const removeDeployed = (folder) => fs.rmSync(folder, { recursive: true, force: true });
