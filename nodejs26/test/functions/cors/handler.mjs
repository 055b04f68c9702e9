export function main() { return "cors"; }
