export function main() { return "x"; }
export async function start() { throw new Error("cannot reach the database"); }
