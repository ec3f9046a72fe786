-- The API requests each run made, per API and endpoint, with the rate limit each was paced at:
-- {"partner":{"GET /orders":{"requests":412,"retries":1,"perSecond":100}},"exchange":{...}}
-- (src/http/meter.ts). Saved after every stage, so a run that fails or is killed keeps what it spent.
alter table run add column requests jsonb not null default '{}';
