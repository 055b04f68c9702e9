// A Lambda handler calling another service with fetch(), as handlers behind API Gateway do.
export const handler = async (event) => {
  const response = await fetch(event.queryStringParameters.next);
  return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: await response.text() };
};
