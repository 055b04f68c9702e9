// An ES module in a .js file: package.json says "type": "module" (the Lambda docs' nodejs example).
export const handler = async (event) => {
  const response = {
    statusCode: 200,
    body: JSON.stringify('Hello from Lambda!'),
  };
  return response;
};
