let stopped = false;
export async function main(req) {
  if (req.path === '/slow') await new Promise((r) => setTimeout(r, 700));
  return 'done';
}
export async function start() { await new Promise((r) => setTimeout(r, 10)); console.log('start hook ran'); }
export function stop() { stopped = true; console.log('stop hook ran'); }
