// main(event) alone, as many Kyma nodejs20-24 functions are written: still the legacy contract.
module.exports = { main: (event) => `type=${event['ce-type']} data=${JSON.stringify(event.data)}` };
