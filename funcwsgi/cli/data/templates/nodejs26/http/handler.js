// The function: funcwsgi's nodejs26 runtime calls main(req, res) once per HTTP request.
//
// req has method, path, query, headers, get(name) and body (parsed by its
// content type); res sets the answer (res.setCode, res.setHeader,
// res.setBody), or return the body: an object is sent as JSON, a string as
// text. Nothing here imports the runtime: it is added when the function runs.
export function main(req, res) {
  const name = req.query.name || req.body?.name || 'world';
  return { message: `Hello, ${name}!` };
}
