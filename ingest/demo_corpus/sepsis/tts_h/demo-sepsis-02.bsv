71 years old | 0
female | 0
type 2 diabetes | -43800
hypothyroidism | -43800
dysuria | -48
left flank discomfort | -24
temperature 38.2 C | 0
heart rate 98/min | 0
blood pressure 132/76 mmHg | 0
pyuria and nitrites on urinalysis | 0
creatinine 1.1 mg/dL | 0
diagnosed with pyelonephritis | 0
admitted | 0
intravenous ceftriaxone started | 1
haemodynamically stable overnight | 8
worsening flank pain | 12
rigor | 12
confusion | 18
blood pressure 82/48 mmHg | 18
lactate 4.6 mmol/L | 18
creatinine 2.3 mg/dL | 18
antibiotics escalated to meropenem | 19
CT showed 7 mm obstructing left ureterovesical junction stone with hydronephrosis | 20
norepinephrine started | 20
percutaneous nephrostomy draining purulent urine | 22
urine and blood cultures grew Escherichia coli | 44
norepinephrine stopped | 50
ureteroscopic stone removal | 672
