-- One row per W and M arm cell with a whole reply (a release's 04_raw_response.txt or the runner's
-- reply that counts): the text the transcript audit reads.
select model_key, arm, decision_date, replicate, reply_text
from {{ ref('stg_raw__hb_responses') }}
where kind = 'arm' and arm in ('W', 'M') and probe_set = 'protocol' and reply_text is not null
