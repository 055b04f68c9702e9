export const main = 42;
