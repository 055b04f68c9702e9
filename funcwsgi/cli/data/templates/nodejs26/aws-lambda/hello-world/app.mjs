// An AWS Lambda handler (nodejs22.x) behind an HTTP API: the event is payload format 2.0.
// Nothing here imports funcwsgi: `sam deploy` deploys it as it is.
export const lambdaHandler = async (event, context) => {
  let body = {};
  try {
    body = event.body ? JSON.parse(event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString() : event.body) : {};
  } catch {
    return { statusCode: 400, body: JSON.stringify({ message: 'the body is not JSON' }) };
  }
  const name = event.queryStringParameters?.name ?? body.name ?? 'world';
  return {
    statusCode: 200,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ message: `Hello, ${name}!` }),
  };
};
