// The same hello world as Kyma's nodejs26 runtime calls it: main(req, res) on Express objects.
export function main(req, res) {
  res.send('Hello, world!');
}
