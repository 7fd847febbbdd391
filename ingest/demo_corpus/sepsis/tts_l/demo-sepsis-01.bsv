58-year-old man | 0
hypertension | -8760
smoker | -8760
cough with sputum | -72
fever | -72
emergency department presentation | 0
febrile 39.1 C | 0
tachycardia | 0
tachypnoea | 0
hypotension 96/58 mmHg | 0
hypoxaemia on room air | 0
right lower lobe pneumonia | 0
leukocytosis | 0
lactate 3.1 | 0
ceftriaxone | 0
azithromycin | 0
fluid bolus | 0
ward admission | 0
hypotension despite fluids | 8
ICU transfer | 8
norepinephrine | 8
mild hypoxaemia on blood gas | 24
Streptococcus pneumoniae bacteraemia | 30
intubation | 36
ARDS | 36
prone ventilation | about 2 days
extubation | 144
discharge | 12 days
