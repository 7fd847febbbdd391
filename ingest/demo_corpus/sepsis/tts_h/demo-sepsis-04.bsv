80 years old | 0
female | 0
atrial fibrillation on apixaban | -17520
chronic kidney disease | -17520
prior cholecystectomy | -43800
abdominal pain | -12
vomiting | -6
afebrile | 0
heart rate 88/min | 0
blood pressure 138/72 mmHg | 0
bilirubin 2.1 mg/dL | 0
alkaline phosphatase 310 U/L | 0
white cell count 11.9 x 10^9/L | 0
common bile duct 11 mm on ultrasound | 0
admitted with suspected choledocholithiasis | 0
piperacillin-tazobactam started | 1
apixaban held | 1
rigors | 16
temperature 38.9 C | 16
hypotension 78/40 mmHg | 28
transferred to intensive care | 28
norepinephrine started | 28
vasopressin added | 32
ERCP with removal of impacted stone and drainage of pus | 40
blood cultures grew Klebsiella pneumoniae | 42
anuria | 60
worsening lactic acidosis | 72
worsening lactic acidosis | 72
care redirected to comfort measures | 90
died | 96
