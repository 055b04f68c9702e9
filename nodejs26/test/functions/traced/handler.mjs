import { getTracer } from 'sdk';
export async function main(req) {
  return getTracer().startActiveSpan('inner-work', async (span) => {
    try {
      const echoed = await fetch(req.query.echo).then((r) => r.json());
      return { echoed, inner: span.spanContext() };
    } finally { span.end(); }
  });
}
