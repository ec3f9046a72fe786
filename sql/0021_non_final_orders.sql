-- The orders still open (OPEN, PART_FILLED, PENDING: ORDER_NON_FINAL in src/sources/exchange/schemas.ts), which every
-- sync asks about again: a partial index finds the few hundred of them without reading every stored order (two scans
-- of 200,000 orders, 0.2 s of a nightly run at the bench's scale). nonFinalIds names the states as literals, so the
-- planner can match this predicate.
create index exchange_order_non_final on exchange_order (account, ex_ord_id)
  where ord_status in ('OPEN', 'PART_FILLED', 'PENDING');
