"""Creating a team, changing it, inviting people and joining by an invitation link."""

from __future__ import annotations

import pytest
from django.test import Client

from bibi.sharedtasks.models import Invitation, Membership, Team

from .conftest import TASK, page_client

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]


def test_a_signed_in_user_creates_a_team_and_owns_it(cast):
    client = page_client(cast, "outsider")
    assert "Create the team" in client.get(f"{TASK}team/").content.decode()
    response = client.post(f"{TASK}team/create/", {"kind": "builder", "name": "Melbourne"})
    assert response["Location"] == f"{TASK}team/"
    team = Team.objects.get(name="Melbourne")
    assert team.memberships.get().user == cast.outsider
    page = client.get(f"{TASK}team/").content.decode()
    assert "<h1>Melbourne</h1>" in page
    assert "The team Melbourne is created" in page


def test_a_taken_team_name_is_refused_beside_the_name_field(cast):
    response = page_client(cast, "outsider").post(
        f"{TASK}team/create/", {"kind": "breaker", "name": "utrecht"}
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert 'id="id_name_error"' in html
    assert "A team named &#x27;utrecht&#x27; already exists in this shared task." in html
    assert not Membership.objects.filter(user=cast.outsider).exists()


def test_an_invitation_link_lets_one_person_join(cast):
    owner = page_client(cast, "breaker")
    owner.post(f"{TASK}team/invitations/")
    invitation = Invitation.objects.get(team=cast.breaker_team)
    link = f"/invitations/{invitation.token}/"
    assert link in owner.get(f"{TASK}team/").content.decode()

    # A visitor who is not logged in sees who invites them, and is asked to log in to accept.
    visitor = Client()
    page = visitor.get(link).content.decode()
    assert "Join Utrecht" in page
    assert visitor.post(link)["Location"].startswith(f"/accounts/login/?next={link}")

    joined = page_client(cast, "outsider").post(link)
    assert joined["Location"] == f"{TASK}team/"
    assert cast.breaker_team.memberships.filter(user=cast.outsider).exists()

    second = page_client(cast, "other_organizer").post(link, follow=True)
    assert "This invitation has already been used." in second.content.decode()
    assert not cast.breaker_team.memberships.filter(user=cast.other_organizer).exists()


def test_a_revoked_invitation_stops_working(cast):
    owner = page_client(cast, "breaker")
    owner.post(f"{TASK}team/invitations/")
    invitation = Invitation.objects.get(team=cast.breaker_team)
    asked = owner.post(f"/invitations/{invitation.token}/revoke/")
    assert "Revoke this invitation?" in asked.content.decode()
    invitation.refresh_from_db()
    assert invitation.revoked_at is None
    owner.post(f"/invitations/{invitation.token}/revoke/", {"confirm": "yes"})
    response = page_client(cast, "outsider").post(f"/invitations/{invitation.token}/", follow=True)
    assert "This invitation was revoked by the team." in response.content.decode()
    assert not Membership.objects.filter(user=cast.outsider).exists()


def test_an_unknown_invitation_is_a_404(cast):
    assert page_client(cast, "outsider").get("/invitations/nope/").status_code == 404


def test_the_owner_makes_the_team_anonymous(cast):
    owner = page_client(cast, "breaker")
    response = owner.post(f"{TASK}team/update/", {"name": "Utrecht", "is_anonymous": "on"})
    assert response.status_code == 302
    cast.breaker_team.refresh_from_db()
    assert cast.breaker_team.is_anonymous
    assert cast.breaker_team.alias in owner.get(f"{TASK}team/").content.decode()


def test_organizers_have_no_team_page(cast):
    response = page_client(cast, "organizer").get(f"{TASK}team/")
    assert response.status_code == 403
    assert "Organizers of a shared task join none of its teams." in response.content.decode()
