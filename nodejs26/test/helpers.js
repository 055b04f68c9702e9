// Starting the real runtime (bin/serve) as a subprocess on a free loopback port,
// capturing its stdout and stderr, and talking HTTP to it.
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, '..');
export const SERVE = path.join(ROOT, 'bin', 'serve');
export const functions = (name) => path.join(HERE, 'functions', name);

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Run bin/serve to its exit (for settings and load failures): { code, stdout, stderr }. */
export function runToExit(env, timeoutMs = 15_000) {
  return new Promise((resolve, reject) => {
    const child = spawn(SERVE, [], { env: { PATH: process.env.PATH, SERVER_HOST: '127.0.0.1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => { stdout += chunk; });
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`bin/serve did not exit: ${stdout}${stderr}`)); }, timeoutMs);
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

/** Start the runtime and wait until /healthz answers. */
export async function startRuntime(env = {}) {
  const port = await freePort();
  const child = spawn(SERVE, [], { env: { PATH: process.env.PATH, SERVER_HOST: '127.0.0.1', SERVER_PORT: String(port), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const runtime = {
    child, port, url: `http://127.0.0.1:${port}`, stdout: '', stderr: '', exited: null,
    fetch: (target, init) => fetch(`http://127.0.0.1:${port}${target}`, init),
    /** The log records (JSON lines) written so far. */
    records: () => runtime.stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line)),
    async waitFor(predicate, what, ms = 5000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const found = predicate(runtime);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; stdout:\n${runtime.stdout}\nstderr:\n${runtime.stderr}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async stop(signal = 'SIGTERM') {
      if (runtime.exited === null) child.kill(signal);
      return runtime.exitedPromise;
    },
  };
  child.stdout.on('data', (chunk) => { runtime.stdout += chunk; });
  child.stderr.on('data', (chunk) => { runtime.stderr += chunk; });
  // 'close', not 'exit': the process has ended and every line it wrote has been read.
  runtime.exitedPromise = new Promise((resolve) => child.on('close', (code, signal) => { runtime.exited = { code, signal }; resolve(runtime.exited); }));
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (runtime.exited !== null) throw new Error(`the runtime exited with ${JSON.stringify(runtime.exited)}: ${runtime.stderr}`);
    try {
      const response = await runtime.fetch('/healthz');
      await response.arrayBuffer();
      return runtime;
    } catch {
      if (Date.now() > deadline) { child.kill('SIGKILL'); throw new Error(`the runtime did not answer: ${runtime.stdout}${runtime.stderr}`); }
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

/** A raw HTTP exchange (for what fetch hides or refuses: HEAD bodies, huge declared lengths). */
export function rawRequest(port, text) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.end(text));
    let data = '';
    socket.on('data', (chunk) => { data += chunk; });
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
  });
}
