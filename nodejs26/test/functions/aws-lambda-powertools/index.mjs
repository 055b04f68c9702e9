// A Lambda function (nodejs22.x) that parses its event with Powertools for AWS Lambda's
// own schemas for API Gateway events, as its docs show: an event the real gateway would not
// send fails the schema. It answers with where the schema disagreed, for the test to read.
import { parse } from '@aws-lambda-powertools/parser';
import { APIGatewayProxyEventSchema, APIGatewayProxyEventV2Schema } from '@aws-lambda-powertools/parser/schemas';

export const handler = async (event) => {
  const schema = event.version === '2.0' ? APIGatewayProxyEventV2Schema : APIGatewayProxyEventSchema;
  const result = parse(event, undefined, schema, true);
  if (!result.success) {
    return { statusCode: 422, body: JSON.stringify({ issues: result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`) }) };
  }
  const parsed = result.data;
  return {
    statusCode: 200,
    body: JSON.stringify({ version: parsed.version ?? '1.0', method: parsed.requestContext.http?.method ?? parsed.httpMethod, cookies: parsed.cookies ?? null, pathParameters: parsed.pathParameters ?? null }),
  };
};
