-- One row per W and M arm cell with a whole reply (a release's 04_raw_response.txt or the runner's
-- reply that counts): the text the transcript audit reads. A reply cut off at the token limit is
-- left out, as the release's runners wrote no file for one.
select model_key, arm, decision_date, replicate, reply_text
from {{ ref('stg_raw__hb_responses') }}
where kind = 'arm' and arm in ('W', 'M') and probe_set = 'protocol' and not is_truncated
