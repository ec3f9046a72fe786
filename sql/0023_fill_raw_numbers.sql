-- Fills written one by one (the fallback for a page the database refused) before this release stored each JSON
-- number of their raw record as an object {"value": "<digits>", "isLosslessNumber": true}. The object holds the
-- number's exact text, and jsonb keeps a number as numeric, so the number put back is what the raw record of a fill
-- written from its page holds. A fill's record is flat (the contract's fields and a few extra texts): only its
-- top-level members are looked at, and only the rows the repair changes are written.
with repaired as (
  select f.account, f.exec_id, (
    select jsonb_object_agg(
      e.key,
      case
        when jsonb_typeof(e.value) = 'object' and e.value -> 'isLosslessNumber' = 'true'::jsonb
          and jsonb_typeof(e.value -> 'value') = 'string' and (select count(*) from jsonb_object_keys(e.value)) = 2
        then to_jsonb((e.value ->> 'value')::numeric)
        else e.value
      end)
    from jsonb_each(f.raw) e) as raw
  from exchange_fill f
  where jsonb_typeof(f.raw) = 'object' and f.raw::text like '%"isLosslessNumber"%'
)
update exchange_fill f set raw = r.raw
from repaired r
where f.account = r.account and f.exec_id = r.exec_id and f.raw is distinct from r.raw;
