// Answers with the serving process's id: the debugger tests compare it with the one the inspector reports.
export function main() {
  return String(process.pid);
}
