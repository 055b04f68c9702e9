function helper() {}
throw new TypeError("module-level failure");
export function main() {}
