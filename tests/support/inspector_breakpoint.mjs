// A debugger attaching to a Node inspector, as VS Code's js-debug does (the inspector protocol over
// WebSocket): set a breakpoint, call the function so that it stops there, resume. Prints one JSON line:
// {breakpoints, url, line, hit, status, body}.
//   node inspector_breakpoint.mjs DEBUG_PORT FUNCTION_URL FILE_SUFFIX LINE
const [debugPort, functionUrl, suffix, line] = process.argv.slice(2);
const [target] = await (await fetch(`http://127.0.0.1:${debugPort}/json/list`)).json();
const socket = new WebSocket(target.webSocketDebuggerUrl);
await new Promise((resolve, reject) => { socket.onopen = resolve; socket.onerror = reject; });
const waiting = new Map();
const scripts = new Map(); // scriptId -> url, as the inspector announces each script
let sent = 0;
let pausedAt;
const paused = new Promise((resolve) => { pausedAt = resolve; });
socket.onmessage = (message) => {
  const data = JSON.parse(message.data);
  if (data.id !== undefined && waiting.has(data.id)) {
    waiting.get(data.id)(data);
    waiting.delete(data.id);
  } else if (data.method === 'Debugger.scriptParsed') scripts.set(data.params.scriptId, data.params.url);
  else if (data.method === 'Debugger.paused') pausedAt(data.params);
};
function ask(method, params = {}) {
  sent += 1;
  const id = sent;
  return new Promise((resolve, reject) => {
    waiting.set(id, (data) => (data.error ? reject(new Error(`${method}: ${JSON.stringify(data.error)}`)) : resolve(data.result)));
    socket.send(JSON.stringify({ id, method, params }));
  });
}
await ask('Debugger.enable');
const placed = await ask('Debugger.setBreakpointByUrl', { lineNumber: Number(line) - 1, urlRegex: `${suffix.replaceAll('.', '\\.')}$` });
const call = fetch(functionUrl).then(async (response) => ({ status: response.status, body: await response.text() }));
const stop = await Promise.race([paused, new Promise((_, reject) => setTimeout(() => reject(new Error('no pause within 20 s')), 20_000))]);
const frame = stop.callFrames[0];
await ask('Debugger.resume');
const answer = await call;
console.log(JSON.stringify({ breakpoints: placed.locations.length, url: scripts.get(frame.location.scriptId) ?? frame.url, line: frame.location.lineNumber + 1, hit: stop.hitBreakpoints ?? [], ...answer }));
socket.close();
