// The bounds on V8's heap the process runs with, for the start-up log: bin/serve
// sets them (and says why) unless a container limit or NODE_OPTIONS sizes the heap.
import v8 from 'node:v8';

const SEMI_SPACE = /(?:^|\s)--max[-_]semi[-_]space[-_]size[=\s]+(\d+)/;
const GROWING = /(?:^|\s)--heap[-_]growing[-_]percent[=\s]+(\d+)/;

/** One line: the semi-space size and where it came from, the old generation's growth, V8's heap limit in MB. */
export function heapLine(execArgv = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? '') {
  const flags = execArgv.join(' ');
  const semi = SEMI_SPACE.exec(flags);
  const option = SEMI_SPACE.exec(nodeOptions);
  const growing = GROWING.exec(flags);
  const young = semi
    ? `young generation at most ${semi[1]} MB per semi-space (--max-semi-space-size=${semi[1]})`
    : option
      ? `young generation at most ${option[1]} MB per semi-space (NODE_OPTIONS)`
      : "young generation sized by V8 from the container's memory limit";
  const old = growing
    ? `old generation grown ${1 + growing[1] / 100}x its live data between full collections (--heap-growing-percent=${growing[1]})`
    : 'old generation grown as V8 chooses';
  return `V8 heap: ${young}, ${old}, heap limit ${Math.round(v8.getHeapStatistics().heap_size_limit / 1048576)} MB`;
}
