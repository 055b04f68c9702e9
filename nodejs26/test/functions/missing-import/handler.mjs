import missing from "no-such-package-7f3a";
export function main() { return missing; }
