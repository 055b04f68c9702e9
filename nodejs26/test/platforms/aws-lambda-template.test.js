// The SAM template as lib/platforms/aws-lambda/template.js reads it: CloudFormation's
// short tags, the payload format each event kind gives, routes, and what it refuses.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { makeRoute, matchRoute, readTemplate } from '../../lib/platforms/aws-lambda/template.js';

function folderWith(text) {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'sam-'));
  fs.writeFileSync(path.join(folder, 'template.yaml'), text);
  return folder;
}

const fn = (properties) => `Resources:\n  Fn:\n    Type: AWS::Serverless::Function\n    Properties:\n${properties}`;

describe('readTemplate', () => {
  it("reads values behind CloudFormation's short tags, in each YAML form", async () => {
    const folder = folderWith(`${fn(`      Handler: app.handler
      Role: !GetAtt Role.Arn
      Environment:
        Variables:
          A: !Ref Table
          B: !Sub "\${AWS::StackName}-b"
          C: !Join [ "-", [ a, !Ref Stage ] ]
          D: !If
            - IsProd
            - x
            - y
      Timeout: 7
      MemorySize: 512
`)}  Table:\n    Type: AWS::Serverless::SimpleTable\n`);
    const template = await readTemplate(folder, undefined);
    assert.deepEqual([template.handler, template.timeout, template.memorySize, template.payloadFormat], ['app.handler', 7, 512, null]);
  });

  for (const [events, format] of [
    ['      Events:\n        E:\n          Type: Api\n          Properties:\n            Path: /a\n            Method: get\n', '1.0'],
    ['      Events:\n        E:\n          Type: HttpApi\n', '2.0'],
    ['      Events:\n        E:\n          Type: HttpApi\n          Properties:\n            PayloadFormatVersion: "1.0"\n', '1.0'],
    ['      FunctionUrlConfig:\n        AuthType: NONE\n', '2.0'],
  ]) {
    it(`gives payload format ${format} for ${events.trim().split('\n').at(-1).trim()}`, async () => {
      const template = await readTemplate(folderWith(fn(`      Handler: app.handler\n${events}`)), undefined);
      assert.equal(template.payloadFormat, format);
    });
  }

  it('refuses events of both formats for one function, naming the way out', async () => {
    const folder = folderWith(fn('      Handler: app.handler\n      Events:\n        A:\n          Type: Api\n          Properties:\n            Path: /a\n            Method: get\n        B:\n          Type: HttpApi\n'));
    await assert.rejects(readTemplate(folder, undefined), /gives the function events of both payload formats \(1\.0, 2\.0\); set LAMBDA_PAYLOAD_FORMAT/);
  });

  it('refuses a template that is not YAML in one line', async () => {
    await assert.rejects(readTemplate(folderWith('Resources: [unclosed\n'), undefined), (error) => /cannot be read as a SAM template: /.test(error.message) && !error.message.includes('\n'));
  });

  it("chooses the function whose Handler is _HANDLER's", async () => {
    const folder = folderWith('Resources:\n  A:\n    Type: AWS::Serverless::Function\n    Properties:\n      Handler: a.handler\n      Timeout: 1\n  B:\n    Type: AWS::Serverless::Function\n    Properties:\n      Handler: b.handler\n      Timeout: 2\n');
    assert.equal((await readTemplate(folder, 'b.handler')).timeout, 2);
  });
});

describe('routes', () => {
  it('match path parameters, greedy paths and methods', () => {
    const routes = [makeRoute('get', '/orders/{id}'), makeRoute('any', '/files/{proxy+}')];
    assert.deepEqual(matchRoute(routes, 'GET', '/orders/7').parameters, { id: '7' });
    assert.equal(matchRoute(routes, 'POST', '/orders/7'), null);
    assert.equal(matchRoute(routes, 'GET', '/orders/7/x'), null);
    assert.deepEqual(matchRoute(routes, 'DELETE', '/files/a/b').parameters, { proxy: 'a/b' });
    assert.equal(matchRoute([makeRoute('get', '/a.b')], 'GET', '/aXb'), null); // a dot is a dot
  });
});
