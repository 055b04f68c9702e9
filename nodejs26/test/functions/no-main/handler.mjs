export function handle() {}
export function helper() {}
export const value = 1;
