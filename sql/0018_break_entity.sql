-- What a break is about, said by its rule's descriptor (src/rules/catalog.ts) and stored with it: the
-- kind of record its key names (src/domain/record-kinds.ts), the unit of its figures (amount, price,
-- hours or text) and, for a break without a record of its own, its day (a roll-forward's first
-- divergent day, a coverage day). Readers take these from the row; none reads a break's words.
alter table break add column entity text, add column unit text, add column day text;

-- Rows written before: once, from their code (and, for the two rules that judge two kinds of record,
-- from the words of their check, which were the only place this was said).
update break set entity = case
    when code like 'P\_%' or code like 'X\_%' then 'partnerOrder'
    when code in ('E_FILL_QTY', 'E_FILL_AVGPX') then 'exchangeOrder'
    when code in ('E_FILL_ORPHAN', 'E_FEE_RATE') then 'fill'
    when code = 'E_SYMBOL_RULES' and message ~* 'order quantity|order size' then 'exchangeOrder'
    when code = 'E_SYMBOL_RULES' then 'fill'
    when code = 'E_STALE' and message ~* '^withdrawal' then 'withdrawal'
    when code = 'E_STALE' then 'deposit'
    when code = 'E_WITHDRAWAL_BENEFICIARY' then 'withdrawal'
    when code = 'S_COVERAGE' then 'coverage'
    when code = 'S_QUARANTINE' then 'quarantine'
    else 'balance'
  end,
  unit = case
    when not (coalesce(expected, '') ~ '^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$'
      or coalesce(actual, '') ~ '^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$'
      or coalesce(difference, '') ~ '^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$') then 'text'
    when code in ('P_STALE', 'E_STALE') then 'hours'
    when code = 'E_FILL_AVGPX' or (code = 'E_SYMBOL_RULES' and message ~ '^price ') then 'price'
    else 'amount'
  end,
  day = case
    when code = 'E_BALANCE_ROLL' and jsonb_typeof(detail -> 'latestPairFirstDivergentDay') = 'string'
      then detail ->> 'latestPairFirstDivergentDay'
    when code = 'S_COVERAGE' and key ~ ':[0-9]{4}-[0-9]{2}-[0-9]{2}$' then right(key, 10)
  end;

-- The balance_local check's figures are in the exchange's local currency (assumed USD), which its
-- rule now says as the break's currency; an acknowledgement of them holds the same currency.
update break set currency = 'USD' where code = 'E_BALANCE_SANITY' and message like 'balance\_local%';
update break_workflow w set ack_currency = 'USD' from break b
  where b.account = w.account and b.code = w.code and b.key = w.key
    and b.code = 'E_BALANCE_SANITY' and b.message like 'balance\_local%' and w.ack_currency is not null;

alter table break alter column entity set not null, alter column unit set not null;
