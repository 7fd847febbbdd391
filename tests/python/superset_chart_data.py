"""Run by Superset's own Python (tests/python/test_superset.py): every chart of the imported dashboard's
data, through Superset's REST API as a logged-in user, printed as one JSON line.

    python superset_chart_data.py USER PASSWORD SLUG
"""
import json
import sys

from superset.app import create_app

user, password, slug = sys.argv[1:4]
client = create_app().test_client()
login = client.post("/api/v1/security/login", json={"username": user, "password": password, "provider": "db", "refresh": False})
headers = {"Authorization": f"Bearer {login.json['access_token']}"}
board = client.get(f"/api/v1/dashboard/{slug}", headers=headers)
charts = client.get(f"/api/v1/dashboard/{slug}/charts", headers=headers)
out = {"dashboard": board.status_code, "charts": {}}
for chart in charts.json["result"]:
    reply = client.get(f"/api/v1/chart/{chart['id']}/data/", headers=headers)
    out["charts"][chart["slice_name"]] = {
        "status": reply.status_code, "data": reply.json["result"][0]["data"] if reply.status_code == 200 else reply.json}
print(json.dumps(out, default=str))
