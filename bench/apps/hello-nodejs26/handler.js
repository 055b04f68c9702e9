// The function the nodejs26 target serves: the same hello world as apps/hello/handler.py.
export function main(req, res) {
  res.setBody('Hello, world!');
}
