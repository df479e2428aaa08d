// Reads TraceQL queries (a JSON array) on stdin; prints, as JSON, the number of error nodes
// Grafana's TraceQL grammar finds in each: 0 means the query parses.
import { parser } from "@grafana/lezer-traceql";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const errors = JSON.parse(input).map((query) => {
  let count = 0;
  parser.parse(query).iterate({ enter: (node) => { if (node.type.isError) count += 1; } });
  return count;
});
process.stdout.write(JSON.stringify(errors));
