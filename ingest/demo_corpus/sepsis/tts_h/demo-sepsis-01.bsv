58 years old | 0
male | 0
hypertension | -8760
30 pack-year smoking history | -8760
productive cough | -72
fever | -72
malaise | -72
presented to the emergency department | 0
temperature 39.1 C | 0
heart rate 112/min | 0
respiratory rate 26/min | 0
blood pressure 96/58 mmHg | 0
oxygen saturation 91% on room air | 0
right lower lobe consolidation on chest radiograph | 0
white cell count 17.8 x 10^9/L | 0
lactate 3.1 mmol/L | 0
blood cultures drawn | 0
ceftriaxone and azithromycin started | 1
30 mL/kg crystalloid bolus | 1
admitted to the medical ward | 2
blood pressure 84/50 mmHg despite fluids | 6
transferred to the intensive care unit | 6
norepinephrine started | 6
arterial blood gas with mild hypoxaemia | 24
vasopressor requirement stable | 24
blood cultures grew Streptococcus pneumoniae | 30
increased work of breathing | 36
intubated for hypoxaemic respiratory failure | 36
bilateral infiltrates consistent with ARDS | 36
prone positioning | 40
norepinephrine weaned off | 96
extubated | 144
discharged home | 288
