export const main = () => "ok";
export const stop = "later";
