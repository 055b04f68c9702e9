// An AWS Lambda handler in the style of the Lambda docs' API Gateway examples
// (nodejs22.x, index.mjs as the console creates it), one path per way a result becomes HTTP.
export const handler = async (event, context) => {
  const path = event.rawPath ?? event.path;
  switch (path) {
    case '/fail':
      throw new Error('secret: the database password is hunter2');
    case '/reject':
      return Promise.reject(new Error('rejected with hunter2'));
    case '/plain':
      return { hello: 'world' };
    case '/text':
      return 'just a string';
    case '/unicode':
      return { name: 'Zoë' };
    case '/number':
      return 42;
    case '/list':
      return [1, 'two', null];
    case '/none':
      return undefined;
    case '/bigint':
      return { count: 10n }; // JSON.stringify throws: the runtime cannot marshal it
    case '/binary':
      return { statusCode: 200, headers: { 'Content-Type': 'image/png' }, body: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]).toString('base64'), isBase64Encoded: true };
    case '/cookies':
      return { statusCode: 201, cookies: ['a=1; Path=/', 'b=2'], body: 'set' };
    case '/multi':
      return { statusCode: 200, multiValueHeaders: { 'X-Many': ['one', 'two'] }, headers: { 'X-One': '1', 'X-Many': 'three' }, body: 'multi' };
    case '/bad':
      return 'not an object';
    case '/no-content':
      return { statusCode: 204 };
    case '/remaining':
      return {
        statusCode: 200,
        body: JSON.stringify({
          first: context.getRemainingTimeInMillis(), name: context.functionName, version: context.functionVersion, memory: context.memoryLimitInMB,
          arn: context.invokedFunctionArn, id: context.awsRequestId, group: context.logGroupName, stream: context.logStreamName,
          waits: context.callbackWaitsForEmptyEventLoop,
        }),
      };
    default: {
      const { body, ...rest } = event;
      return {
        statusCode: 200,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ event: rest, body: body !== undefined && body !== null && event.isBase64Encoded ? Buffer.from(body, 'base64').toString('hex') : body ?? null }),
      };
    }
  }
};
