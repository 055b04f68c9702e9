// As handler.py, on the nodejs26 runtime.
export function main(req) {
  return String((req.rawBody ?? Buffer.alloc(0)).length);
}
